(** * Network: the attention layer and the networks of Section 2 of the paper.

    Tokens are the columns [x_1, ..., x_n] of [X] (here: the list of token
    vectors); a matrix is the list of its rows.  One layer with score
    matrix [M] and normalizer [phi] (eq. (1)):

      [S_M(X)_a = sum_b phi(x_a^T M x_b) x_b / sum_b phi(x_a^T M x_b)],

    the native layer [X -> V S_{Q K^T}(X)], the native network (the layers
    in order), and the effective network [F_{L,M} = L S_{M_D} o ... o
    S_{M_1}] (eq. (2)).  Everything is written over an [alg], with the
    normalizer of each layer a function on that algebra. *)

From Coq Require Import List QArith.
From Symattn Require Import Alg.
Import ListNotations.

Fixpoint zipw {X Y Z : Type} (f : X -> Y -> Z) (l : list X) (l' : list Y) : list Z :=
  match l, l' with
  | x :: l1, y :: l1' => f x y :: zipw f l1 l1'
  | _, _ => []
  end.

Section Net.
Variable A : alg.

Definition vsum (l : list (car A)) : car A := fold_left add l zero.

(** [x^T y] *)
Definition dot (x y : list (car A)) : car A := vsum (zipw mul x y).

(** [M x] *)
Definition mat_vec (M : list (list (car A))) (x : list (car A)) : list (car A) :=
  map (fun row => dot row x) M.

(** [Q K^T]: entry [(a, b)] is (row a of Q) . (row b of K). *)
Definition mul_transpose (Q K : list (list (car A))) : list (list (car A)) :=
  map (fun qa => map (fun kb => dot qa kb) K) Q.

Definition vadd (x y : list (car A)) : list (car A) := zipw add x y.
Definition vscale (c : car A) (x : list (car A)) : list (car A) := map (mul c) x.
Definition vsum_vecs (vs : list (list (car A))) : list (car A) :=
  match vs with [] => [] | v :: vs' => fold_left vadd vs' v end.

(** Eq. (1): query [a], normalised over the keys [b]. *)
Definition attention (phi : car A -> car A) (M : list (list (car A)))
    (X : list (list (car A))) : list (list (car A)) :=
  let MX := map (mat_vec M) X in                        (* M x_b, every key b *)
  map (fun xa =>
         let w := map (fun mxb => phi (dot xa mxb)) MX in  (* phi(x_a^T M x_b) *)
         vscale (inv (vsum w)) (vsum_vecs (zipw vscale w X)))
      X.

Variable N : Type.                      (* how a layer's normalizer is given *)
Variable ph : N -> car A -> car A.      (* ... and its action on the algebra *)

(** The native layer [X -> V S_{Q K^T}(X)]. *)
Definition native_layer (l : N * list (list (car A)) * list (list (car A)) * list (list (car A)))
    (X : list (list (car A))) : list (list (car A)) :=
  let '(phi, Q, K, V) := l in
  map (mat_vec V) (attention (ph phi) (mul_transpose Q K) X).

(** The native network: layer 1 first. *)
Definition native_net (layers : list (N * list (list (car A)) * list (list (car A)) * list (list (car A))))
    (X : list (list (car A))) : list (list (car A)) :=
  fold_left (fun Y l => native_layer l Y) layers X.

(** Eq. (2): [F_{L,M} = L S_{M_D} o ... o S_{M_1}]. *)
Definition effective_net (scores : list (N * list (list (car A)))) (L : list (list (car A)))
    (X : list (list (car A))) : list (list (car A)) :=
  map (mat_vec L) (fold_left (fun Y (s : N * list (list (car A))) => attention (ph (fst s)) (snd s) Y) scores X).

End Net.

(** ** The networks over related algebras are related *)

Section NetRel.
Variables (A B : alg) (R : car A -> car B -> Prop).
Hypothesis HR : alg_rel A B R.

Let VR := Forall2 R.
Let MR := Forall2 (Forall2 R).

Lemma zipw_rel {X X' Y Y' Z Z' : Type} (RX : X -> X' -> Prop) (RY : Y -> Y' -> Prop)
  (RZ : Z -> Z' -> Prop) f g l l' k k' :
  (forall x x' y y', RX x x' -> RY y y' -> RZ (f x y) (g x' y')) ->
  Forall2 RX l l' -> Forall2 RY k k' -> Forall2 RZ (zipw f l k) (zipw g l' k').
Proof.
  intros Hf H; revert k k'; induction H; intros k k' Hk; simpl; [constructor|].
  destruct Hk; constructor; auto.
Qed.

Lemma vsum_rel l l' : VR l l' -> R (vsum A l) (vsum B l').
Proof.
  intros H; unfold vsum; eapply Forall2_fold_left; eauto.
  - intros; apply (rel_add _ _ _ HR); auto.
  - apply (rel_zero _ _ _ HR).
Qed.

Lemma dot_rel x x' y y' : VR x x' -> VR y y' -> R (dot A x y) (dot B x' y').
Proof.
  intros; apply vsum_rel; eapply zipw_rel; eauto; intros; apply (rel_mul _ _ _ HR); auto.
Qed.

Lemma mat_vec_rel m m' x x' : MR m m' -> VR x x' -> VR (mat_vec A m x) (mat_vec B m' x').
Proof. intros; eapply Forall2_map; eauto; intros; apply dot_rel; auto. Qed.

Lemma mul_transpose_rel q q' k k' : MR q q' -> MR k k' -> MR (mul_transpose A q k) (mul_transpose B q' k').
Proof.
  intros; eapply Forall2_map; eauto; intros.
  eapply Forall2_map; eauto; intros; apply dot_rel; auto.
Qed.

Lemma vadd_rel x x' y y' : VR x x' -> VR y y' -> VR (vadd A x y) (vadd B x' y').
Proof. intros; eapply zipw_rel; eauto; intros; apply (rel_add _ _ _ HR); auto. Qed.

Lemma vscale_rel c c' x x' : R c c' -> VR x x' -> VR (vscale A c x) (vscale B c' x').
Proof. intros; eapply Forall2_map; eauto; intros; apply (rel_mul _ _ _ HR); auto. Qed.

Lemma vsum_vecs_rel vs vs' : MR vs vs' -> VR (vsum_vecs A vs) (vsum_vecs B vs').
Proof.
  intros H; destruct H; simpl; [constructor|].
  eapply Forall2_fold_left; eauto; intros; apply vadd_rel; auto.
Qed.

Lemma attention_rel phi phi' m m' X X' :
  (forall x x', R x x' -> R (phi x) (phi' x')) -> MR m m' -> MR X X' ->
  MR (attention A phi m X) (attention B phi' m' X').
Proof.
  intros Hphi Hm HX; unfold attention.
  assert (HMX : MR (map (mat_vec A m) X) (map (mat_vec B m') X'))
    by (eapply Forall2_map; eauto; intros; apply mat_vec_rel; auto).
  eapply Forall2_map; eauto; intros xa xa' Hxa.
  assert (Hw : VR (map (fun mxb => phi (dot A xa mxb)) (map (mat_vec A m) X))
                  (map (fun mxb => phi' (dot B xa' mxb)) (map (mat_vec B m') X')))
    by (eapply Forall2_map; eauto; intros; apply Hphi, dot_rel; auto).
  apply vscale_rel.
  - apply (rel_inv _ _ _ HR), vsum_rel; auto.
  - apply vsum_vecs_rel; eapply zipw_rel; eauto; intros; apply vscale_rel; auto.
Qed.

Variables (N : Type) (phA : N -> car A -> car A) (phB : N -> car B -> car B).
Hypothesis Hph : forall n x x', R x x' -> R (phA n x) (phB n x').

Definition LR (l : N * list (list (car A)) * list (list (car A)) * list (list (car A)))
              (l' : N * list (list (car B)) * list (list (car B)) * list (list (car B))) : Prop :=
  let '(n, q, k, v) := l in let '(n', q', k', v') := l' in
  n = n' /\ MR q q' /\ MR k k' /\ MR v v'.

Lemma native_net_rel ls ls' X X' :
  Forall2 LR ls ls' -> MR X X' -> MR (native_net A N phA ls X) (native_net B N phB ls' X').
Proof.
  intros H HX; unfold native_net; eapply Forall2_fold_left; eauto.
  intros Y Y' l l' HY Hl; destruct l as [[[n q] k] v], l' as [[[n' q'] k'] v'].
  destruct Hl as [-> [Hq [Hk Hv]]]; simpl.
  eapply Forall2_map.
  - apply attention_rel; [intros; apply Hph; auto|apply mul_transpose_rel; auto|auto].
  - intros; apply mat_vec_rel; auto.
Qed.

Definition SR (s : N * list (list (car A))) (s' : N * list (list (car B))) : Prop :=
  fst s = fst s' /\ MR (snd s) (snd s').

Lemma effective_net_rel ss ss' L L' X X' :
  Forall2 SR ss ss' -> MR L L' -> MR X X' ->
  MR (effective_net A N phA ss L X) (effective_net B N phB ss' L' X').
Proof.
  intros H HL HX; unfold effective_net.
  eapply Forall2_map; [|intros; apply mat_vec_rel; eauto].
  eapply Forall2_fold_left; eauto.
  intros Y Y' s s' HY [Hn Hs]; rewrite Hn; apply attention_rel; [intros; apply Hph; auto|auto|auto].
Qed.

End NetRel.
