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

Definition native_size (ls : list (list Q * QSM * QSM * QSM)) : nat :=
  fold_left (fun a l => let '(_, q, k, v) := l in a + msize q + msize k + msize v) ls O.

Definition effective_size (ss : list (list Q * QSM)) (L : QSM) : nat :=
  fold_left (fun a s => a + msize (snd s)) ss (msize L).

Section Jac.
Variable SA : alg.                    (* an algebra of series *)
Variable emb : list Q -> car SA.      (* a rational series as one of its elements *)

Definition Ta := tangent_alg SA.

Definition tconst (c : list Q) : car Ta := (emb c, []).
Definition tseed (c : list Q) (j : nat) : car Ta := (emb c, repeat (@zero SA) j ++ [@one SA]).

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

Definition jac_row (P : nat) (e : car Ta) : list (car SA) := map (fun j => nth j (snd e) (@zero SA)) (seq 0 P).

Definition jac_rows (P : nat) (out : list (list (car Ta))) : list (list (car SA)) :=
  flat_map (map (jac_row P)) out.

Definition inputs (X : QSM) : list (list (car Ta)) := map (map tconst) X.

Definition native_jacobian_in (ls : list (list Q * QSM * QSM * QSM)) (bank : list QSM) : list (list (car SA)) :=
  let P := native_size ls in
  let net := seed_layers O ls in
  flat_map (fun X => jac_rows P (native_net Ta (list Q) (tphi SA) net (inputs X))) bank.

Definition effective_jacobian_in (ss : list (list Q * QSM)) (L : QSM) (bank : list QSM) : list (list (car SA)) :=
  let P := effective_size ss L in
  let Lt := seed_mat O L in
  let st := seed_scores (msize L) ss in
  flat_map (fun X => jac_rows P (effective_net Ta (list Q) (tphi SA) st Lt (inputs X))) bank.

End Jac.

Definition Sa (K : alg) (m : nat) : alg := series_alg K m.

(** The Jacobian of the native network in all its parameters, on a bank of
    inputs, as series over [K] modulo [t^m]. *)
Definition native_jacobian (K : alg) (m : nat) (ls : list (list Q * QSM * QSM * QSM)) (bank : list QSM)
    : list (list (list (car K))) :=
  native_jacobian_in (Sa K m) (map ofQ) ls bank.

(** The Jacobian of the effective network in [L, M_1, ..., M_D]. *)
Definition effective_jacobian (K : alg) (m : nat) (ss : list (list Q * QSM)) (L : QSM) (bank : list QSM)
    : list (list (list (car K))) :=
  effective_jacobian_in (Sa K m) (map ofQ) ss L bank.

(** ** Jacobians over related algebras are related *)

Section JacRel.
Variables (S1 S2 : alg) (RS : car S1 -> car S2 -> Prop).
Hypothesis HS : alg_rel S1 S2 RS.
Variables (emb1 : list Q -> car S1) (emb2 : list Q -> car S2).
Hypothesis Hemb : forall c, RS (emb1 c) (emb2 c).

Let TRel := TR S1 S2 RS.
Let HT : alg_rel (Ta S1) (Ta S2) TRel := tangent_rel _ _ _ HS.

Lemma tconst_rel c : TRel (tconst S1 emb1 c) (tconst S2 emb2 c).
Proof. split; simpl; [apply Hemb|constructor]. Qed.

Lemma tseed_rel c j : TRel (tseed S1 emb1 c j) (tseed S2 emb2 c j).
Proof.
  split; simpl; [apply Hemb|].
  apply Forall2_app; [apply Forall2_repeat; apply (rel_zero _ _ _ HS)|].
  constructor; [apply (rel_one _ _ _ HS)|constructor].
Qed.

Lemma seed_row_rel j r : Forall2 TRel (seed_row S1 emb1 j r) (seed_row S2 emb2 j r).
Proof. revert j; induction r; intros j; simpl; constructor; auto using tseed_rel. Qed.

Lemma seed_mat_rel j mx : Forall2 (Forall2 TRel) (seed_mat S1 emb1 j mx) (seed_mat S2 emb2 j mx).
Proof. revert j; induction mx; intros j; simpl; constructor; auto using seed_row_rel. Qed.

Lemma seed_layers_rel j ls :
  Forall2 (LR (Ta S1) (Ta S2) TRel (list Q)) (seed_layers S1 emb1 j ls) (seed_layers S2 emb2 j ls).
Proof.
  revert j; induction ls as [|[[[c q] k] v] ls IH]; intros j; simpl; constructor; auto.
  simpl; repeat split; auto using seed_mat_rel.
Qed.

Lemma seed_scores_rel j ss :
  Forall2 (Network.SR (Ta S1) (Ta S2) TRel (list Q)) (seed_scores S1 emb1 j ss) (seed_scores S2 emb2 j ss).
Proof.
  revert j; induction ss as [|[c mx] ss IH]; intros j; simpl; constructor; auto.
  split; simpl; auto using seed_mat_rel.
Qed.

Lemma inputs_rel X : Forall2 (Forall2 TRel) (inputs S1 emb1 X) (inputs S2 emb2 X).
Proof.
  unfold inputs; eapply Forall2_map with (S := eq); [clear; induction X; constructor; auto|].
  intros u v ->; eapply Forall2_map with (S := eq); [clear; induction v; constructor; auto|].
  intros x y ->; apply tconst_rel.
Qed.

Lemma jac_rows_rel P out out' : Forall2 (Forall2 TRel) out out' ->
  Forall2 (Forall2 RS) (jac_rows S1 P out) (jac_rows S2 P out').
Proof.
  intros H; unfold jac_rows; induction H; simpl; [constructor|].
  apply Forall2_app; auto.
  eapply Forall2_map; eauto; intros e e' [_ He].
  apply Forall2_seq_map; intros j; apply Forall2_nth; auto; apply (rel_zero _ _ _ HS).
Qed.

Lemma flat_map_rel {U : Type} {X Y : Type} (RR : X -> Y -> Prop) (f : U -> list X) (g : U -> list Y) l :
  (forall u, Forall2 RR (f u) (g u)) -> Forall2 RR (flat_map f l) (flat_map g l).
Proof. intros H; induction l; simpl; [constructor|apply Forall2_app; auto]. Qed.

Lemma tphi_rel' c x y : TRel x y -> TRel (tphi S1 c x) (tphi S2 c y).
Proof. apply tphi_rel; auto. Qed.

Theorem native_jacobian_in_rel ls bank :
  Forall2 (Forall2 RS) (native_jacobian_in S1 emb1 ls bank) (native_jacobian_in S2 emb2 ls bank).
Proof.
  unfold native_jacobian_in; apply flat_map_rel; intros X.
  apply jac_rows_rel.
  apply (native_net_rel (Ta S1) (Ta S2) TRel HT (list Q) (tphi S1) (tphi S2) tphi_rel').
  - apply seed_layers_rel.
  - apply inputs_rel.
Qed.

Theorem effective_jacobian_in_rel ss L bank :
  Forall2 (Forall2 RS) (effective_jacobian_in S1 emb1 ss L bank) (effective_jacobian_in S2 emb2 ss L bank).
Proof.
  unfold effective_jacobian_in; apply flat_map_rel; intros X.
  apply jac_rows_rel.
  apply (effective_net_rel (Ta S1) (Ta S2) TRel HT (list Q) (tphi S1) (tphi S2) tphi_rel').
  - apply seed_scores_rel.
  - apply seed_mat_rel.
  - apply inputs_rel.
Qed.

End JacRel.

Lemma map_ofQ_rel (A B : alg) (R : car A -> car B -> Prop) (HR : alg_rel A B R) (c : list Q) :
  Forall2 R (map ofQ c) (map ofQ c).
Proof. induction c; simpl; constructor; auto; apply (rel_ofQ _ _ _ HR). Qed.

Theorem native_jacobian_rel (A B : alg) (R : car A -> car B -> Prop) (HR : alg_rel A B R) m ls bank :
  Forall2 (Forall2 (Forall2 R)) (native_jacobian A m ls bank) (native_jacobian B m ls bank).
Proof.
  apply (native_jacobian_in_rel (Sa A m) (Sa B m) (Forall2 R) (series_rel A B R HR m)).
  apply map_ofQ_rel; auto.
Qed.

Theorem effective_jacobian_rel (A B : alg) (R : car A -> car B -> Prop) (HR : alg_rel A B R) m ss L bank :
  Forall2 (Forall2 (Forall2 R)) (effective_jacobian A m ss L bank) (effective_jacobian B m ss L bank).
Proof.
  apply (effective_jacobian_in_rel (Sa A m) (Sa B m) (Forall2 R) (series_rel A B R HR m)).
  apply map_ofQ_rel; auto.
Qed.
