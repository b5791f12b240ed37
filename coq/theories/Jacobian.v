(** * Jacobian: normalizers, parameters along a path, and Jacobians by forward mode.

    The data of a network are rational: each parameter entry is a series
    with rational coefficients ([[0; u]] for [t u], [[v]] for a constant
    [v]), each input entry too ([[x]] for a fixed input, [[0; y]] for the
    ray [rho y]).  The Jacobian in all parameters is computed by forward
    mode: parameter entry number [j] (layer by layer, [Q_i], [K_i], [V_i]
    in the native case, [L], [M_1], ... in the effective one, each matrix
    row by row) carries the tangent [e_j]; the row of an output entry is
    its tangent.  Rows: input by input, token by token, coordinate by
    coordinate.  Entries are series truncated modulo [t^m]. *)

From Coq Require Import List QArith ZArith.
From Symattn Require Import Alg Series Tangent Network.
Import ListNotations.
Local Open Scope nat_scope.

(** ** Taylor coefficients of the catalogue normalizers, to order [m] *)

Fixpoint factZ (k : nat) : Z := match k with O => 1%Z | S k' => (Z.of_nat k * factZ k')%Z end.

Definition exp_taylor (m : nat) : list Q := map (fun k => (1 # Z.to_pos (factZ k))%Q) (seq 0 m).

Definition cosh_taylor (m : nat) : list Q :=
  map (fun k => if Nat.even k then (1 # Z.to_pos (factZ k))%Q else 0%Q) (seq 0 m).

(** [exp(s^2)]: [1/j!] at [s^(2j)]. *)
Definition gauss_taylor (m : nat) : list Q :=
  map (fun k => if Nat.even k then (1 # Z.to_pos (factZ (Nat.div2 k)))%Q else 0%Q) (seq 0 m).

(** A polynomial normalizer is its own list of coefficients. *)
Definition poly_taylor (m : nat) (cs : list Q) : list Q := firstn m cs.

(** Any other normalizer: its Taylor coefficients as data (not derived here). *)
Definition data_taylor (cs : list Q) : list Q := cs.

(** ** Rational data as series *)

Definition QM := list (list Q).               (* a rational matrix, by rows *)
Definition QSM := list (list (list Q)).       (* a matrix of rational series *)

Definition times_t (A : QM) : QSM := map (map (fun u => [0%Q; u])) A.
Definition constant (A : QM) : QSM := map (map (fun u => [u])) A.

(** The path [Q_i = t U_i], [K_i = t W_i], [V_i] of Theorem 4. *)
Definition path_layers (phis : list (list Q)) (U W V : list QM) : list (list Q * QSM * QSM * QSM) :=
  zipw (fun c uwv => let '(u, w, v) := uwv in (c, times_t u, times_t w, constant v))
       phis (zipw (fun uw v => (fst uw, snd uw, v)) (zipw pair U W) V).

(** A fixed native point [(Q_i, K_i, V_i)]. *)
Definition point_layers (phis : list (list Q)) (Qs Ks Vs : list QM) : list (list Q * QSM * QSM * QSM) :=
  zipw (fun c qkv => let '(q, k, v) := qkv in (c, constant q, constant k, constant v))
       phis (zipw (fun qk v => (fst qk, snd qk, v)) (zipw pair Qs Ks) Vs).

(** Inputs are lists of tokens (the columns of X). *)
Definition fixed_input (X : QM) : QSM := constant X.
Definition ray_input (Y : QM) : QSM := times_t Y.

Definition msize (mx : QSM) : nat := fold_left (fun a r => a + length r) mx O.

Section Jac.
Variable K : alg.
Variable m : nat.

Definition Sa := series_alg K m.
Definition Ta := tangent_alg Sa.

Definition tconst (c : list Q) : car Ta := (map ofQ c, []).
Definition tseed (c : list Q) (j : nat) : car Ta := (map ofQ c, repeat (@zero Sa) j ++ [@one Sa]).

Fixpoint seed_row (j : nat) (r : list (list Q)) : list (car Ta) :=
  match r with [] => [] | c :: r' => tseed c j :: seed_row (S j) r' end.

Fixpoint seed_mat (j : nat) (mx : QSM) : list (list (car Ta)) :=
  match mx with [] => [] | r :: mx' => seed_row j r :: seed_mat (j + length r) mx' end.

Fixpoint seed_layers (j : nat) (ls : list (list Q * QSM * QSM * QSM)) :
    list (list Q * list (list (car Ta)) * list (list (car Ta)) * list (list (car Ta))) :=
  match ls with
  | [] => []
  | (c, q, k, v) :: ls' =>
      let j1 := j + msize q in
      let j2 := j1 + msize k in
      (c, seed_mat j q, seed_mat j1 k, seed_mat j2 v) :: seed_layers (j2 + msize v) ls'
  end.

Fixpoint seed_scores (j : nat) (ss : list (list Q * QSM)) : list (list Q * list (list (car Ta))) :=
  match ss with
  | [] => []
  | (c, mx) :: ss' => (c, seed_mat j mx) :: seed_scores (j + msize mx) ss'
  end.

Definition native_size (ls : list (list Q * QSM * QSM * QSM)) : nat :=
  fold_left (fun a l => let '(_, q, k, v) := l in a + msize q + msize k + msize v) ls O.

Definition effective_size (ss : list (list Q * QSM)) (L : QSM) : nat :=
  fold_left (fun a s => a + msize (snd s)) ss (msize L).

Definition jac_row (P : nat) (e : car Ta) : list (car Sa) := map (fun j => nth j (snd e) (@zero Sa)) (seq 0 P).

Definition jac_rows (P : nat) (out : list (list (car Ta))) : list (list (car Sa)) :=
  flat_map (map (jac_row P)) out.

Definition inputs (X : QSM) : list (list (car Ta)) := map (map tconst) X.

(** The Jacobian of the native network in all its parameters, on a bank of inputs. *)
Definition native_jacobian (ls : list (list Q * QSM * QSM * QSM)) (bank : list QSM) : list (list (car Sa)) :=
  let P := native_size ls in
  let net := seed_layers O ls in
  flat_map (fun X => jac_rows P (native_net Ta (list Q) (tphi Sa) net (inputs X))) bank.

(** The Jacobian of the effective network in [L, M_1, ..., M_D]. *)
Definition effective_jacobian (ss : list (list Q * QSM)) (L : QSM) (bank : list QSM) : list (list (car Sa)) :=
  let P := effective_size ss L in
  let Lt := seed_mat O L in
  let st := seed_scores (msize L) ss in
  flat_map (fun X => jac_rows P (effective_net Ta (list Q) (tphi Sa) st Lt (inputs X))) bank.

End Jac.

(** ** Jacobians over related algebras are related *)

Section JacRel.
Variables (A B : alg) (R : car A -> car B -> Prop).
Hypothesis HR : alg_rel A B R.
Variable m : nat.

Let SR := Forall2 R.
Let HS : alg_rel (Sa A m) (Sa B m) SR := series_rel A B R HR m.
Let TRel := TR (Sa A m) (Sa B m) SR.
Let HT : alg_rel (Ta A m) (Ta B m) TRel := tangent_rel _ _ _ HS.

Lemma tconst_rel c : TRel (tconst A m c) (tconst B m c).
Proof.
  split; simpl; [|constructor].
  eapply Forall2_map with (S := eq); [clear; induction c; constructor; auto|].
  intros u v ->; apply (rel_ofQ _ _ _ HR).
Qed.

Lemma tseed_rel c j : TRel (tseed A m c j) (tseed B m c j).
Proof.
  split; simpl.
  - eapply Forall2_map with (S := eq); [clear; induction c; constructor; auto|].
    intros u v ->; apply (rel_ofQ _ _ _ HR).
  - apply Forall2_app; [apply Forall2_repeat; constructor|].
    constructor; [|constructor]. constructor; [apply (rel_one _ _ _ HR)|constructor].
Qed.

Lemma seed_row_rel j r : Forall2 TRel (seed_row A m j r) (seed_row B m j r).
Proof. revert j; induction r; intros j; simpl; constructor; auto using tseed_rel. Qed.

Lemma seed_mat_rel j mx : Forall2 (Forall2 TRel) (seed_mat A m j mx) (seed_mat B m j mx).
Proof. revert j; induction mx; intros j; simpl; constructor; auto using seed_row_rel. Qed.

Lemma seed_layers_rel j ls :
  Forall2 (LR (Ta A m) (Ta B m) TRel (list Q)) (seed_layers A m j ls) (seed_layers B m j ls).
Proof.
  revert j; induction ls as [|[[[c q] k] v] ls IH]; intros j; simpl; constructor; auto.
  simpl; repeat split; auto using seed_mat_rel.
Qed.

Lemma seed_scores_rel j ss :
  Forall2 (Network.SR (Ta A m) (Ta B m) TRel (list Q)) (seed_scores A m j ss) (seed_scores B m j ss).
Proof.
  revert j; induction ss as [|[c mx] ss IH]; intros j; simpl; constructor; auto.
  split; simpl; auto using seed_mat_rel.
Qed.

Lemma inputs_rel X : Forall2 (Forall2 TRel) (inputs A m X) (inputs B m X).
Proof.
  unfold inputs; eapply Forall2_map with (S := eq); [clear; induction X; constructor; auto|].
  intros u v ->; eapply Forall2_map with (S := eq); [clear; induction v; constructor; auto|].
  intros x y ->; apply tconst_rel.
Qed.

Lemma jac_rows_rel P out out' : Forall2 (Forall2 TRel) out out' ->
  Forall2 (Forall2 SR) (jac_rows A m P out) (jac_rows B m P out').
Proof.
  intros H; unfold jac_rows; induction H; simpl; [constructor|].
  apply Forall2_app; auto.
  eapply Forall2_map; eauto; intros e e' [_ He].
  apply Forall2_seq_map; intros j; apply Forall2_nth; auto; constructor.
Qed.

Lemma flat_map_rel {U : Type} {X Y : Type} (RR : X -> Y -> Prop) (f : U -> list X) (g : U -> list Y) l :
  (forall u, Forall2 RR (f u) (g u)) -> Forall2 RR (flat_map f l) (flat_map g l).
Proof. intros H; induction l; simpl; [constructor|apply Forall2_app; auto]. Qed.

Lemma tphi_rel' c x y : TRel x y -> TRel (tphi (Sa A m) c x) (tphi (Sa B m) c y).
Proof. apply tphi_rel; auto. Qed.

Theorem native_jacobian_rel ls bank :
  Forall2 (Forall2 SR) (native_jacobian A m ls bank) (native_jacobian B m ls bank).
Proof.
  unfold native_jacobian; apply flat_map_rel; intros X.
  apply jac_rows_rel.
  apply (native_net_rel (Ta A m) (Ta B m) TRel HT (list Q) (tphi (Sa A m)) (tphi (Sa B m)) tphi_rel').
  - apply seed_layers_rel.
  - apply inputs_rel.
Qed.

Theorem effective_jacobian_rel ss L bank :
  Forall2 (Forall2 SR) (effective_jacobian A m ss L bank) (effective_jacobian B m ss L bank).
Proof.
  unfold effective_jacobian; apply flat_map_rel; intros X.
  apply jac_rows_rel.
  apply (effective_net_rel (Ta A m) (Ta B m) TRel HT (list Q) (tphi (Sa A m)) (tphi (Sa B m)) tphi_rel').
  - apply seed_scores_rel.
  - apply seed_mat_rel.
  - apply inputs_rel.
Qed.

End JacRel.
